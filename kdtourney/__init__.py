"""kdtourney: tournaments and bot evaluation for Kingdomino."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("kdtourney")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"
