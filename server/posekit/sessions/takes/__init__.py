"""Takes: what a session was given over time, recorded, stored and replayed offline."""
