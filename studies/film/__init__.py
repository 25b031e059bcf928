"""The built-in Filmmaking study: database dump, task sources and the built task bank."""
