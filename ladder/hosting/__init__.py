"""Hosted bots: owners upload a version (an archive of source with a manifest); the bot host runs it in a sandbox."""
