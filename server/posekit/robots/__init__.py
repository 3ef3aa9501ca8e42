"""posekit."""
