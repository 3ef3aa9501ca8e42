"""A live session: its configuration, task stack, state and the feed of its watchers."""
