"""The terrain-taster's own package: how much a domino is worth to it."""

from terrains.value import claim_value

__all__ = ["claim_value"]
