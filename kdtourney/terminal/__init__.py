"""The terminal views of the commands.

    progress   the progress of a run
    display    the live views of sprt, tune and ladder
    replay     a stored game as text, whole or position by position
"""
