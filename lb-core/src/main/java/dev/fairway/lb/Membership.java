package dev.fairway.lb;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The balancer's members, in the source's order, with the version that strategies key their
 * membership-only structures on (a hash ring). Immutable: a new list yields a {@link Change} that
 * is computed without touching any existing member, then {@linkplain Change#commit() committed} in
 * steps that cannot fail, so a list is applied whole or not at all.
 */
final class Membership {
  private static final System.Logger LOG = System.getLogger(LoadBalancer.class.getName());
  static final Membership NONE = new Membership(new TrackedTarget[0], Map.of(), 0, false);

  final TrackedTarget[] members;
  private final Map<String, TrackedTarget> byId;
  /** Changes whenever ids, order, weights or descriptions change (not on health changes). */
  final long version;
  /** True once any list had a target: later joiners warm up, and "empty" reads differently. */
  final boolean sawTargets;

  private Membership(TrackedTarget[] members, Map<String, TrackedTarget> byId, long version, boolean sawTargets) {
    this.members = members;
    this.byId = byId;
    this.version = version;
    this.sawTargets = sawTargets;
  }

  /** What applying one list would change. Nothing is changed until {@link #commit()}. */
  static final class Change {
    final Membership next;
    final List<TrackedTarget> joined;
    final List<TrackedTarget> left;
    /** Members whose description changed, and their new descriptions (same index). */
    final List<TrackedTarget> updated;
    final List<Target> descriptions;

    Change(Membership next, List<TrackedTarget> joined, List<TrackedTarget> left, List<TrackedTarget> updated,
        List<Target> descriptions) {
      this.next = next;
      this.joined = joined;
      this.left = left;
      this.updated = updated;
      this.descriptions = descriptions;
    }

    /** Takes the change into effect on the members: plain field writes only, so it cannot fail half-way. */
    void commit() {
      for (int i = 0; i < updated.size(); i++) {
        updated.get(i).target = descriptions.get(i);
      }
      for (TrackedTarget t : left) {
        t.removed = true;
        t.pickable = false;
      }
    }
  }

  /**
   * The change {@code list} makes. Null elements and repeated ids are skipped with a log line;
   * {@code newcomer} makes the state for each target that joins (it must not touch other members).
   */
  Change next(String service, List<Target> list, Function<Target, TrackedTarget> newcomer) {
    Map<String, TrackedTarget> nextById = new LinkedHashMap<>();
    List<TrackedTarget> joined = new ArrayList<>();
    List<TrackedTarget> left = new ArrayList<>();
    List<TrackedTarget> updated = new ArrayList<>();
    List<Target> descriptions = new ArrayList<>();
    for (Target target : list) {
      if (target == null) {
        LOG.log(System.Logger.Level.WARNING, "{0}: the target source delivered a null target; skipped", service);
        continue;
      }
      if (nextById.containsKey(target.id())) {
        LOG.log(System.Logger.Level.WARNING, "{0}: duplicate target id {1}; kept the first", service, target.id());
        continue;
      }
      TrackedTarget existing = byId.get(target.id());
      if (existing == null) {
        TrackedTarget added = newcomer.apply(target);
        joined.add(added);
        nextById.put(target.id(), added);
      } else {
        if (!existing.target.sameAs(target)) {
          updated.add(existing);
          descriptions.add(target);
        }
        nextById.put(target.id(), existing);
      }
    }
    for (TrackedTarget old : members) {
      if (!nextById.containsKey(old.target.id())) {
        left.add(old);
      }
    }
    TrackedTarget[] nextMembers = nextById.values().toArray(new TrackedTarget[0]);
    boolean changed = !joined.isEmpty() || !left.isEmpty() || !updated.isEmpty() || !sameOrder(nextMembers);
    Membership next = changed
        ? new Membership(nextMembers, nextById, version + 1, sawTargets || nextMembers.length > 0)
        : this;
    return new Change(next, joined, left, updated, descriptions);
  }

  private boolean sameOrder(TrackedTarget[] other) {
    if (other.length != members.length) {
      return false;
    }
    for (int i = 0; i < other.length; i++) {
      if (other[i] != members[i]) {
        return false;
      }
    }
    return true;
  }
}
