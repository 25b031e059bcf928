"""Reusable Streamlit components of the repair workspace (pure figure/HTML builders + panels)."""
