"""Design review: proposals, critiques of each other's proposals, refinements; a judge synthesises.

Rounds, all of whose turns are taken at the same time (nobody sees a turn of their own round):

- round 1, proposal: everyone proposes a solution, seeing only the problem;
- even rounds, critique: every participant critiques each other participant's latest proposal, N x (N-1)
  addressed turns (critic -> author), each seeing only the proposal it critiques;
- odd rounds from 3, refinement: everyone improves its own latest proposal, seeing the critiques of the
  round before addressed to it (`critiques_shown: all`: every critique of that round).

`rounds` counts these rounds, as design-team CLIs do ("Round 2/3: Critique Phase"): 3, the default, is one
critique and refinement cycle, 5 two; 1 is proposals only. An even number would end on critiques nobody
answers, so the review holds one round more, their refinement (a notice says so); nor does the rounds' time
budget (`stopping.timeout_s`) spent in a critique round hold back the refinement after it. The stopping rules
(convergence, repetition, the judge's advice, its quality score with `stopping.quality_at_least`, which has
every round of full proposals assessed: the proposals and each refinement) end a review only after a
refinement round, so it never ends on proposals nobody critiqued or on critiques nobody answered.
`turn_order` has no effect: no turn of a round depends on another of the same round.

Then the result, by `format_options.synthesis` (a design-team config's synthesisMethod):

- judge (the default): the judge answers a structured synthesis (description, components, trade-offs,
  recommendations, an implementation sketch, the ideas kept from each participant, the implementation
  complexity low, medium or high, confidence 0-100);
- merge: the judge merges the final proposals into one solution whose every part names the participants
  whose proposals it comes from (none: the judge's own addition), with the same trade-offs, recommendations,
  implementation sketch, complexity and confidence;
- voting: each participant votes (Ask kind "vote") for another's final proposal, by its author's name, with
  a one-sentence reason; a vote for its own proposal or an unknown one is invalid and retried like any
  structured answer, and one that never validates counts as no vote. The most voted proposal is the
  solution, quoted in full. A tie is said in words and broken by the judge choosing among the tied proposals
  only (Ask kind "tiebreak"); with no judge, or no valid choice from it, the proposal of the participant
  listed first in the config wins, and the outcome says so. With two participants every vote is a 1-1 tie.

Whatever ends the rounds, the review ends with that result. An expert that fails for good leaves (the engine drops
it) and the others review on without it; a stop from outside the rules (the user, failures that leave one
expert, a deadline; not a budget, whose rest is the judge's reserve for a verdict) goes straight to the result,
made from the proposals that exist. The judge is told who left, in which round and why, and who made no
proposal before a stop, so it speaks for none of them. Those who left are not among the final proposals (no
vote, kept idea or merged part goes to them), and the result names them in its headline, a section and
`details['missing']`.

The implementation sketch is kept in the outcome's details only (`implementation`, "" under voting): the
exports show it when asked to include code. The complexity is named in the headline with the confidence, as
design-team CLIs show them ("Implementation Complexity: Medium", "Confidence Score: 87/100"); a vote has
none: its result is a participant's own proposal.

The package, one concept a module: `protocol.py` (the format: phases, checks, steps, prompts, the result's
dispatch), `proposals.py` (phases of rounds, latest and final proposals, quoting, who left), `answers.py` (the
kinds of structured answer and the judge's schemas), `voting.py` (ballots, the count, the tie-break, the voted
outcome) and `outcomes.py` (the judge's synthesis and merge as the result, and who is missing from any result).
"""

from moot.protocols.design_review.answers import (
    IMPLEMENTATION_CHARS,
    MAX_PARTS,
    MERGE,
    SYNTHESIS,
    TIEBREAK,
    VOTE,
    MergePart,
    merge_model,
    synthesis_model,
)
from moot.protocols.design_review.proposals import (
    Contribution,
    PhaseName,
    contributions,
    final_proposals,
    latest_proposal,
    phase_of,
)
from moot.protocols.design_review.protocol import DesignReview, DesignReviewOptions, SynthesisMethod
from moot.protocols.design_review.voting import (
    Ballot,
    ChoiceAnswer,
    VoteCount,
    choice_answer,
    count_votes,
    vote_answer,
    voters,
)

__all__ = [
    "IMPLEMENTATION_CHARS",
    "MAX_PARTS",
    "MERGE",
    "SYNTHESIS",
    "TIEBREAK",
    "VOTE",
    "Ballot",
    "ChoiceAnswer",
    "Contribution",
    "DesignReview",
    "DesignReviewOptions",
    "MergePart",
    "PhaseName",
    "SynthesisMethod",
    "VoteCount",
    "choice_answer",
    "contributions",
    "count_votes",
    "final_proposals",
    "latest_proposal",
    "merge_model",
    "phase_of",
    "synthesis_model",
    "vote_answer",
    "voters",
]
