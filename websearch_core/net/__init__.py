"""The network under every request: the URL jail, the pinning transports, one deadline held
at the socket, and bodies read within a ceiling."""
