"""UpdateFeatures (KIP-584, KIP-778): finalized feature levels, changed as the emulated
release's controller changes them.

- ZooKeeper brokers (2.7 to 3.9) support no feature: the controller (broker 0; the others
  answer NOT_CONTROLLER) refuses every update with INVALID_REQUEST, each with the reason
  Kafka's ``KafkaController.validateFeatureUpdate`` gives. v0's ``allowDowngrade`` is a safe
  downgrade; ``validateOnly`` changes nothing there.
- KRaft brokers before 3.3 hold no features: 3.0 and 3.1 forward UpdateFeatures to a
  controller that does not handle it (UNKNOWN_SERVER_ERROR), 3.2 refuses it itself.
- KRaft brokers from 3.3 forward it to the controller, whose ``FeatureControlManager``
  checks each update: upgrade type, the supported levels, the direction, and for
  ``metadata.version`` the floor and which downgrades are safe (the release table's
  ``metadata_version_change``). The controller reads the request's ``UpgradeType``, so a v0
  request's ``allowDowngrade`` does not make a downgrade there. Up to 3.9 each update
  succeeds or fails alone; from 4.0 the first failure fails them all, with a top-level
  error, and v2 answers carry no per-feature results. ``validateOnly`` (v1+) changes
  nothing. Accepted levels show in later ApiVersions answers, with a higher epoch.

Not modelled: 4.0's dependency checks between features (``Features.validateVersion``:
``transaction.version`` against ``metadata.version``, ...) and ``kraft.version`` upgrades
going through the Raft quorum (KIP-853).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ..broker_releases import SAFE_DOWNGRADE, UNSAFE_DOWNGRADE, UPGRADE, ZOOKEEPER
from ..release_names import Release
from ..api_keys import ApiKey
from .call import Call
from .errors import ErrorCode
from .handler import Handler
from .release import Emulation
from .shapes import Names

#: UpdateFeatures v1's ``UpgradeType`` codes (FeatureUpdate.UpgradeType); others are unknown.
UPGRADE_TYPES = {1: UPGRADE, 2: SAFE_DOWNGRADE, 3: UNSAFE_DOWNGRADE}
UNKNOWN_TYPE = "unknown"
#: The id of the KRaft controller the brokers forward to (in its messages).
CONTROLLER_ID = 0
#: A feature a controller does not know: "supported" at level 0 only (QuorumFeatures.DISABLED).
DISABLED = (0, 0)
RELEASE_3_2, RELEASE_3_7, RELEASE_4_0 = (Release.parse(r) for r in ("3.2", "3.7", "4.0"))

NAMES = Names(absent={"upgrade_type": 1, "validate_only": False})  # both new in v1 (3.3)


class FeatureUpdateIn(Protocol):
    feature: str
    max_version_level: int
    allow_downgrade: bool
    upgrade_type: int


class UpdateFeaturesIn(Protocol):
    feature_updates: Sequence[FeatureUpdateIn]
    validate_only: bool


Outcome = tuple[int, str | None]
"""An error code and message (``(0, None)``: accepted)."""
ACCEPTED: Outcome = (ErrorCode.NONE, None)


def update_features(call: Call) -> Any:
    emulated = call.state.release
    if emulated is None or emulated.broker.features is None:
        message = "the fake broker emulates no release with features"
        return respond(call, (ErrorCode.UNSUPPORTED_VERSION, message), {})
    req: UpdateFeaturesIn = call.read(UpdateFeaturesIn)
    updates = {u.feature: u for u in req.feature_updates}  # Kafka reads them as a map
    if emulated.broker.kind == ZOOKEEPER:
        return zookeeper(call, emulated, updates)
    if not emulated.feature_levels_known:
        if emulated.broker.release < RELEASE_3_2:  # forwarded to a controller without it
            return respond(call, (ErrorCode.UNKNOWN_SERVER_ERROR, None), {})
        return respond(
            call,
            (
                ErrorCode.UNSUPPORTED_VERSION,
                "Should always be forwarded to the Active Controller when using a Raft-based "
                "metadata quorum: UPDATE_FEATURES",
            ),
            {},
        )
    return kraft(call, emulated, updates, req.validate_only)


def respond(call: Call, top: Outcome, results: dict[str, Outcome]) -> Any:
    item = call.item(call.response, "results")
    return call.respond(
        error_code=top[0],
        error_message=top[1],
        results=[
            call.build(item, feature=name, error_code=code, error_message=message)
            for name, (code, message) in results.items()
        ],
    )


def upgrade_type(call: Call, update: FeatureUpdateIn, controller: bool) -> str:
    """The update's type as the one judging it reads it: v0's ``allowDowngrade`` is a safe
    downgrade to a ZooKeeper controller (UpdateFeaturesRequest.getFeature); a KRaft
    controller reads ``UpgradeType``, 1 (upgrade) in a v0 request."""
    if call.version == 0 and not controller:
        return SAFE_DOWNGRADE if update.allow_downgrade else UPGRADE
    return UPGRADE_TYPES.get(update.upgrade_type, UNKNOWN_TYPE)


# --- ZooKeeper -------------------------------------------------------------------------------


def zookeeper(call: Call, emulated: Emulation, updates: dict[str, FeatureUpdateIn]) -> Any:
    if call.node.node_id != call.state.brokers[0].node_id:
        return respond(call, (ErrorCode.NOT_CONTROLLER, None), {})
    new_words = emulated.broker.release >= Release.parse("3.3")  # KIP-778's wording
    results = {
        name: zookeeper_outcome(upgrade_type(call, u, False), u.max_version_level, name, new_words)
        for name, u in updates.items()
    }
    return respond(call, ACCEPTED, results)


def zookeeper_outcome(kind: str, level: int, name: str, new_words: bool) -> Outcome:
    """Why a ZooKeeper controller, which supports no feature and has none finalized,
    refuses an update (KafkaController.validateFeatureUpdate)."""
    invalid = ErrorCode.INVALID_REQUEST
    if not name:
        return invalid, "Feature name can not be empty."
    if new_words and kind == UNKNOWN_TYPE:
        return invalid, "Received unknown upgrade type."
    if level < 1 and kind != UPGRADE:
        return invalid, "Can not delete non-existing finalized feature."
    if level < 1:
        if new_words:
            return invalid, (
                f"Can not provide versionLevel: {level} less than 1 without setting the SAFE "
                "downgradeType in the request."
            )
        return invalid, (
            f"Can not provide maxVersionLevel: {level} less than 1 without setting the "
            "allowDowngrade flag to true in the request."
        )
    return (
        invalid,
        "Could not apply finalized feature update because the provided feature is not supported.",
    )


# --- KRaft -----------------------------------------------------------------------------------


def kraft(
    call: Call, emulated: Emulation, updates: dict[str, FeatureUpdateIn], validate_only: bool
) -> Any:
    all_or_nothing = emulated.broker.release >= RELEASE_4_0
    results: dict[str, Outcome] = {}
    levels: dict[str, int] = {}
    for name, update in updates.items():
        kind = upgrade_type(call, update, True)
        outcome = kraft_outcome(emulated, name, update.max_version_level, kind)
        if all_or_nothing and outcome != ACCEPTED:
            message = f"The update failed for all features since the following feature had an error: {outcome[1]}"
            return respond(call, (outcome[0], message), {})
        results[name] = outcome
        if outcome == ACCEPTED:
            levels[name] = update.max_version_level
    if not validate_only:
        emulated.set_levels(levels)
    if all_or_nothing and call.version >= 2:
        results = {}  # v2 answers carry no per-feature results
    elif not all_or_nothing:
        results = dict(sorted(results.items()))  # 3.x: the controller's TreeMap
    return respond(call, ACCEPTED, results)


def kraft_outcome(emulated: Emulation, name: str, level: int, kind: str) -> Outcome:
    """Whether a KRaft controller of the release accepts setting feature ``name`` to
    ``level`` (FeatureControlManager.updateFeature), and why not."""

    def invalid(reason: str) -> Outcome:
        return ErrorCode.INVALID_UPDATE_VERSION, (
            f"Invalid update version {level} for feature {name}. {reason}"
        )

    if kind == UNKNOWN_TYPE:
        return invalid("The controller does not support the given upgrade type.")
    metadata = name == "metadata.version"
    current = emulated.finalized.get(name, 0)
    if level < 0:
        return invalid("A feature version cannot be less than 0.")
    low, high = emulated.supported().get(name, DISABLED)
    if not low <= level <= high:
        who = f"Local controller {CONTROLLER_ID}"
        if high == 0:
            return invalid(f"{who} does not support this feature.")
        return invalid(
            f"{who} only supports versions {low}-{high}"
            if low != high
            else f"{who} only supports versions {low}"
        )
    if level < current and kind == UPGRADE:
        return invalid(
            "Can't downgrade the version of this feature without setting the upgrade type to "
            "either safe or unsafe downgrade."
        )
    if level > current and kind != UPGRADE:
        return invalid("Can't downgrade to a newer version.")
    if metadata:
        features = emulated.broker.features
        assert features is not None
        reason = features.metadata_version_change(current, level, kind, emulated.unstable)
        if reason is not None:
            if reason.startswith("Refusing") and emulated.broker.release < RELEASE_3_7:
                reason += (
                    " Retry using UNSAFE_DOWNGRADE if you want to force the downgrade to proceed."
                )
            return ErrorCode.INVALID_UPDATE_VERSION, f"Invalid metadata.version {level}. {reason}"
    return ACCEPTED


HANDLERS = (Handler(ApiKey.UPDATE_FEATURES, (0, 2), update_features, NAMES, UpdateFeaturesIn),)
