"""The web layer: controllers, the router, body parsing, providers and the HTTP error mapping."""
