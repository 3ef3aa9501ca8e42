"""What a session is made of, as portable data: its spec, solver settings and caps."""
