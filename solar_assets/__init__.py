"""solar: validated Speed-of-Light bounds."""
