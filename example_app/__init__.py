"""A small Litestar auth app using litestar-userio: the demo, and the docs' running example."""
