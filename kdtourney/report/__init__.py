"""The HTML pages: each one self-contained (no network), written from a store's tables.

    html          a tournament's report, `DIR/index.html`, and the page of one game
    ladder        the ladder's list and page
    pool          one rating list over many tournament folders (`kdtourney ratings`)
    pool_html     that list's page
    tune_page     a tune's page, `DIR/tune.html`
    standings     the standings both the terminal and the report show
    page          what every page shares: templates, atomic write, rules in words, game viewer
    replays       every stored game, move by move, for the game viewer
    plots, svg    the plots (matplotlib, as inline SVG) and the kingdoms' pictures
    fmt           numbers as the pages show them
"""
