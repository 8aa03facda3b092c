"""The built-in stores: ``memory`` (tests, throwaway runs) and ``sqlite`` (the default).

Importing this package imports nothing heavy; each store imports numpy, faiss or SQLAlchemy
inside the method that needs it.
"""
