"""The speed and memory benchmark behind ``punctgen bench`` (:mod:`.suite`): every figure
a ratio against a reference measured in the same run."""
