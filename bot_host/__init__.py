"""The bot host: runs hosted bot versions in bubblewrap sandboxes that reach only the gateway's Unix-domain socket."""
