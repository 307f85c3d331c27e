"""The engine gateway: holds bots' gRPC streams and relays decision requests from match workers to them.

Layer: I/O at the edge of the engine service (grpc.aio). It authenticates bots (behind `auth.TokenVerifier`),
records sessions in the registry (which gateway holds which bot), and serves the internal relay that the
worker-side `RemoteSeat` calls. It never runs a match loop (that is the referee's, in workers), imports no
Django and nothing of `ladder` (the ladder's verifier is a plug-in named in the configuration, `verifiers`),
and holds no game rules.

Modules: `protocol` (generated stubs and conversions), `config` (environment), `auth`, `verifiers`, `registry`,
`hub` (sessions and relay logic as plain async code, over `session`: a stream and the bot's clock), `servicers`
(thin gRPC adapters), `server` (entry point, health, reflection), `remote_seat` (the referee's seat in a
worker process, over `relay_connection`), `local` (local test runner).
"""
