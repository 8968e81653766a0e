"""The Methods page's paper-A figure (the page's own code is :mod:`normbook.book_pages.methods`)."""
