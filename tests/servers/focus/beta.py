"""The tool no change reaches in the focus test."""


def beta(word: str) -> str:
    """The word, doubled."""
    if word.endswith("b"):
        return word.lower()
    return word * 2
