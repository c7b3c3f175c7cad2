def used(x):
    return x * 2


def old_helper(x):
    return x - 1


def also_used(x):
    return used(x) + 1
