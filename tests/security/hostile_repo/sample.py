import os


def read_lines(path):
    with open(path) as f:
        return f.read().splitlines()


def main():
    
