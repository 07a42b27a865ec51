package dev.fairway.lb.dns;

import dev.fairway.lb.Target;
import java.net.InetAddress;
import java.util.List;
import java.util.Map;
import org.xbill.DNS.Name;

/** What one refresh found: a list to publish ({@link Resolved}) or nothing to go by ({@link Failed}). */
sealed interface Outcome {
  /** Something went wrong with one entry: a metric reason and one line for the log. */
  record Problem(String reason, String detail) {}

  /**
   * A real answer: {@code targets} (empty after NXDOMAIN or no records, {@code emptyBecause} says
   * which), valid for {@code ttlSeconds}. {@code hosts}: each SRV target's addresses as used, kept for
   * the next refresh in case a host's lookup fails then. {@code skipped}: records that gave no target;
   * {@code errors}: host lookups that failed (their last known addresses were used, if any).
   */
  record Resolved(List<Target> targets, long ttlSeconds, Map<Name, List<InetAddress>> hosts,
      List<Problem> skipped, List<Problem> errors, String emptyBecause) implements Outcome {}

  /** No answer about the name (SERVFAIL, REFUSED, a timeout, ...): the last good list stays. */
  record Failed(String reason, String detail) implements Outcome {}
}
