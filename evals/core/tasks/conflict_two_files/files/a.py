def greeting():
    return 'hello'
