"""The engine code that calls the ports: what makes a gap in a port real."""
