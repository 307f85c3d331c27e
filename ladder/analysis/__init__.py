"""Match analysis: the house `search` level's review of every decision of a finished match (`MatchAnalysis`)."""
