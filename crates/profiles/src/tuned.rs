//! TuneD import (below).
