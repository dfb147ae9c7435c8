# SPDX-License-Identifier: GPL-2.0-or-later
"""Helpers every test and benchmark shares (topologies, process memory)."""
