"""One module per subcommand; ``portq.cli`` imports them lazily."""
