"""A session exported as a runnable Python script."""
