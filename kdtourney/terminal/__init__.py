"""The terminal views of the commands.

    progress   the progress of a run, and what every live view shares
    display    the live views of sprt, tune and ladder
    tables     the tables printed at a command's end: standings, rating list, ladder
    replay     a stored game as text, whole or position by position
"""
