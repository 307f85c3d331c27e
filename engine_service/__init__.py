"""The engine service: pure game rules (`games`), the referee that drives a match (`referee`), and the gRPC
gateway that bots connect to (`gateway`)."""
