"""Server-rendered pages: home, leaderboards, bots (with rating charts), matches, the replay viewer, bot
registration, login. No front-end build step: templates, one stylesheet, vanilla JS and SVG."""
