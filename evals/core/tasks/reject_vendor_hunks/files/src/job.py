def run():
    print('running')
