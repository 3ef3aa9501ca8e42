"""Live reload: sessions take a robot's recompiled model when its files change."""
