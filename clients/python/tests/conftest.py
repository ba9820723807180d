import sys
from pathlib import Path

# Import the package from this checkout without installing it.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

REPO = Path(__file__).resolve().parents[3]
