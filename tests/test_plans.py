"""Plan notices (app/turn/plans.py): which article above the customer's plan a question names."""

from __future__ import annotations

from app.turn.plans import BeyondPlan, lowest_plan, named_article, names_article
from tuning import TUNING

ABOVE = [
    BeyondPlan("gadget-logs", "Gadget logs", "enterprise"),
    BeyondPlan("xsync", "XSYNC user provisioning", "enterprise"),
    BeyondPlan("fancy-setup", "Setting up fancy single sign-on", "pro"),
]


def test_a_question_names_an_article_by_its_whole_title_or_its_acronym() -> None:
    assert names_article("How long are gadget logs kept?", "Gadget logs")
    assert not names_article("How long are logs kept?", "Gadget logs")  # half a title
    assert names_article("Is XSYNC on my plan?", "XSYNC user provisioning")
    assert names_article("can we provision a user?", "XSYNC user provisioning")
    assert not names_article("How do I add a user?", "XSYNC user provisioning")
    fancy = "Setting up fancy single sign-on"
    assert not names_article("how do I set up single sign-on", fancy)
    assert names_article("how do I set up fancy single sign-on", fancy)


def test_the_named_article_and_the_plan_that_covers_it() -> None:
    article = named_article("How long are gadget logs kept?", ABOVE)
    assert article is not None and article.slug == "gadget-logs"
    assert named_article("What does a red light mean?", ABOVE) is None
    assert lowest_plan("enterprise", TUNING.audience_ladder) == "enterprise"
    assert lowest_plan("pro", TUNING.audience_ladder) == "pro"
    assert lowest_plan("nobody", TUNING.audience_ladder) is None
