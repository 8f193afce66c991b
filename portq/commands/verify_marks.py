"""A pytest plugin ``portq verify`` loads into the pytest it runs (``-p portq.commands.verify_marks``).

It records on every test carrying the ``gpu`` mark a ``portq_gpu``
property, which the junit report keeps, so verify can say per file how many
tests ran on the GPU. It imports nothing of portq and never torch.
"""


def pytest_collection_modifyitems(items) -> None:
    for item in items:
        if item.get_closest_marker("gpu") is not None:
            item.user_properties.append(("portq_gpu", "1"))
