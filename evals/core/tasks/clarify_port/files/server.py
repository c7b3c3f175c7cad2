PORT = 8080


def serve():
    print(f'listening on {PORT}')
