"""`faultlens serve` and `faultlens site build`: the catalogue and the diagnosis in a browser.

links, views, templating and site need Jinja2 alone (the static site is built without a server
stack); the other modules need FastAPI and are imported by `app.create_app`.
"""
