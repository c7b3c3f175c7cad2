def helper():
    print('helping')
