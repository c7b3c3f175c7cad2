from users import get_user


def greet(uid):
    name = get_user(uid)
    return f'hello {name}'
