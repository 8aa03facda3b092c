"""Entry point of memu-backend-cloud in the `memu` group. It registers nothing yet; the module exists so the
distribution installs, loads and shows up in `memu plugins` like every other member."""
