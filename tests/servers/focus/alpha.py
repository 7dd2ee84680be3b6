"""The tool a pull request changes in the focus test."""


def alpha(word: str) -> str:
    """The word, reversed."""
    if word.startswith("a"):
        return word.upper()
    return word[::-1]
