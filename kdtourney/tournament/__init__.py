"""What is played: a tournament's definition and schedule, as its folder records them.

    definition   Tournament, checked from user input (prepare)
    schedule     formats, blocks of seat arrangements, deal and bot seeds (pure functions)
    blocks       what a block plays, as the store records it, and the games played from that record
    tune         what a tune is (the bot, its parameters, the schedule)
    sprt         what an SPRT is (SprtTest), its tally and state from the store, its verdict lines
"""
