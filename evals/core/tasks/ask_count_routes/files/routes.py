ROUTES = []


def route(path):
    def wrap(fn):
        ROUTES.append((path, fn))
        return fn
    return wrap


@route('/')
def index():
    return 'index'


@route('/about')
def about():
    return 'about'


@route('/health')
def health():
    return 'ok'
