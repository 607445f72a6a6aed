"""`faultlens serve` and `faultlens site build`: the catalogue and the diagnosis in a browser.

Modules that need FastAPI (app, api, pages, errors, limits, intake) are imported only by
`create_app`; links, views, templating and site need Jinja2 alone, so the static site can be
built without a server stack.
"""
