package dev.fairway.lb.dns;

import dev.fairway.lb.Target;
import java.io.IOException;
import java.net.InetAddress;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import org.jspecify.annotations.Nullable;
import org.xbill.DNS.AAAARecord;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.SRVRecord;
import org.xbill.DNS.Type;
import org.xbill.DNS.WireParseException;

/**
 * One refresh: the questions it asks and how their replies become an {@link Outcome}.
 *
 * <p>SRV: ask for the SRV records; take the lowest priority group; find each host's addresses in the
 * reply's additional section, else ask for its A and AAAA records; if the group yields no address, go
 * on to the next group. A host whose lookup fails keeps the addresses it had in the last good refresh.
 * A/AAAA: ask for both; any failure fails the refresh. Aliases (CNAME) are followed, up to
 * {@link Lookup#MAX_ALIASES}.
 *
 * <p>Every question has its own timeout, run on the {@link Scheduler} (so tests drive it with a
 * manual clock); every reply hops onto the scheduler before it is read, so all of this runs on the
 * source's one thread.
 */
final class Resolution {
  private final DnsClient client;
  private final Scheduler scheduler;
  private final long timeoutNanos;
  private final boolean ipv4;
  private final boolean ipv6;

  Resolution(DnsClient client, Scheduler scheduler, long timeoutNanos, boolean ipv4, boolean ipv6) {
    this.client = client;
    this.scheduler = scheduler;
    this.timeoutNanos = timeoutNanos;
    this.ipv4 = ipv4;
    this.ipv6 = ipv6;
  }

  /** Raised by the source's own timer when a question is still unanswered after the timeout. */
  static final class QueryTimeoutException extends IOException {
    private static final long serialVersionUID = 1L;

    QueryTimeoutException(String message) {
      super(message);
    }
  }

  // ----------------------------------------------------------------------------------------- SRV

  /** The targets of {@code name}'s SRV records; {@code known}: each host's addresses from the last good refresh. */
  CompletableFuture<Outcome> srv(Name name, Map<Name, List<InetAddress>> known) {
    return lookup(name, Type.SRV).thenCompose(l -> {
      if (l instanceof Lookup.Failed f) {
        return outcome(new Outcome.Failed(f.reason(), f.detail()));
      }
      if (l instanceof Lookup.Found found) {
        List<SRVRecord> records = new ArrayList<>();
        List<Outcome.Problem> skipped = new ArrayList<>();
        for (Record r : found.records()) {
          SRVRecord srv = (SRVRecord) r;
          records.add(srv);
          if (srv.getPort() == 0 && !srv.getTarget().equals(Name.root)) {
            skipped.add(new Outcome.Problem("port_zero", "SRV record " + srv + " has port 0"));
          }
        }
        List<List<SRVRecord>> groups = SrvTargets.groups(records);
        if (groups.isEmpty()) {
          return outcome(new Outcome.Resolved(List.of(), found.ttlSeconds(), Map.of(), skipped, List.of(),
              "its SRV records name no host (\".\": the service is not available there)"));
        }
        return group(groups, 0, found.additional(), known,
            new Pass(found.ttlSeconds(), skipped));
      }
      Lookup.Absent a = (Lookup.Absent) l;
      return outcome(new Outcome.Resolved(List.of(), a.ttlSeconds(), Map.of(), List.of(), List.of(),
          a.nxdomain() ? "NXDOMAIN: the name does not exist" : "the name has no SRV records"));
    });
  }

  /** What one SRV refresh has gathered so far across groups: its lowest TTL and its problems. */
  private static final class Pass {
    long ttl;
    final List<Outcome.Problem> skipped;
    final List<Outcome.Problem> errors = new ArrayList<>();
    final Map<Name, List<InetAddress>> hosts = new LinkedHashMap<>();

    Pass(long ttl, List<Outcome.Problem> skipped) {
      this.ttl = ttl;
      this.skipped = skipped;
    }
  }

  private CompletableFuture<Outcome> group(List<List<SRVRecord>> groups, int index, List<Record> additional,
      Map<Name, List<InetAddress>> known, Pass pass) {
    List<SRVRecord> group = groups.get(index);
    Set<Name> hosts = new LinkedHashSet<>();
    for (SRVRecord r : group) {
      hosts.add(r.getTarget());
    }
    Map<Name, CompletableFuture<HostAddresses>> pending = new LinkedHashMap<>();
    for (Name host : hosts) {
      HostAddresses given = fromAdditional(host, additional);
      pending.put(host, given != null ? CompletableFuture.completedFuture(given) : addresses(host));
    }
    return CompletableFuture.allOf(pending.values().toArray(new CompletableFuture<?>[0])).thenCompose(all -> {
      Map<Name, List<InetAddress>> found = new LinkedHashMap<>();
      for (Map.Entry<Name, CompletableFuture<HostAddresses>> e : pending.entrySet()) {
        Name host = e.getKey();
        HostAddresses h = e.getValue().join(); // completed: allOf has
        pass.ttl = Math.min(pass.ttl, h.ttl);
        List<InetAddress> use = h.addresses;
        if (h.failure != null) {
          List<InetAddress> last = known.get(host);
          pass.errors.add(new Outcome.Problem(h.failure.reason(), h.failure.detail()
              + (last != null ? "; using its last known addresses " + last.stream().map(SrvTargets::literal).toList() : "")));
          if (last != null) {
            use = last;
          }
        }
        if (use.isEmpty()) {
          if (h.failure == null) {
            pass.skipped.add(new Outcome.Problem("no_address", "SRV target " + SrvTargets.hostName(host)
                + " has no " + families() + " record"));
          }
          continue;
        }
        found.put(host, use);
        pass.hosts.put(host, use);
      }
      List<Target> targets = SrvTargets.targets(group, found);
      if (targets.isEmpty() && index + 1 < groups.size()) {
        return group(groups, index + 1, additional, known, pass);
      }
      return outcome(new Outcome.Resolved(targets, pass.ttl, Map.copyOf(pass.hosts), List.copyOf(pass.skipped),
          List.copyOf(pass.errors), "no SRV target has an address"));
    });
  }

  /** One host's addresses: what was found, the lowest TTL, and the failure if a lookup failed. */
  private record HostAddresses(List<InetAddress> addresses, long ttl, Lookup.@Nullable Failed failure) {}

  /** The host's addresses if the additional section holds any (of the families in use), else null. */
  private @Nullable HostAddresses fromAdditional(Name host, List<Record> additional) {
    List<InetAddress> addresses = new ArrayList<>();
    long ttl = Long.MAX_VALUE;
    for (Record r : additional) {
      if (r.getName().equals(host)) {
        InetAddress a = address(r);
        if (a != null) {
          addresses.add(a);
          ttl = Math.min(ttl, r.getTTL());
        }
      }
    }
    return addresses.isEmpty() ? null : new HostAddresses(List.copyOf(addresses), ttl, null);
  }

  private CompletableFuture<HostAddresses> addresses(Name host) {
    return bothFamilies(host).thenApply(lookups -> {
      List<InetAddress> addresses = new ArrayList<>();
      long ttl = Long.MAX_VALUE;
      Lookup.Failed failure = null;
      for (Lookup l : lookups) {
        if (l instanceof Lookup.Found f) {
          addresses.addAll(addressesOf(f.records()));
          ttl = Math.min(ttl, f.ttlSeconds());
        } else if (l instanceof Lookup.Absent a) {
          ttl = Math.min(ttl, a.ttlSeconds());
        } else if (l instanceof Lookup.Failed f && failure == null) {
          failure = f;
        }
      }
      return new HostAddresses(List.copyOf(addresses), ttl, failure);
    });
  }

  // ----------------------------------------------------------------------------------------- A/AAAA

  /** The targets of {@code name}'s A and AAAA records on {@code port}; any failed lookup fails the refresh. */
  CompletableFuture<Outcome> addresses(Name name, int port) {
    return bothFamilies(name).thenApply(lookups -> {
      List<InetAddress> addresses = new ArrayList<>();
      long ttl = Long.MAX_VALUE;
      boolean nxdomain = true;
      for (Lookup l : lookups) {
        if (l instanceof Lookup.Failed f) {
          return new Outcome.Failed(f.reason(), f.detail());
        }
        if (l instanceof Lookup.Found f) {
          addresses.addAll(addressesOf(f.records()));
          ttl = Math.min(ttl, f.ttlSeconds());
          nxdomain = false;
        } else if (l instanceof Lookup.Absent a) {
          ttl = Math.min(ttl, a.ttlSeconds());
          nxdomain &= a.nxdomain();
        }
      }
      return new Outcome.Resolved(SrvTargets.addressTargets(name, addresses, port), ttl, Map.of(), List.of(),
          List.of(), nxdomain ? "NXDOMAIN: the name does not exist" : "the name has no " + families() + " records");
    });
  }

  // ----------------------------------------------------------------------------------------- questions

  /** A then AAAA (as configured), asked at once; completes when both are answered or failed. */
  private CompletableFuture<List<Lookup>> bothFamilies(Name name) {
    List<CompletableFuture<Lookup>> asked = new ArrayList<>(2);
    if (ipv4) {
      asked.add(lookup(name, Type.A));
    }
    if (ipv6) {
      asked.add(lookup(name, Type.AAAA));
    }
    return CompletableFuture.allOf(asked.toArray(new CompletableFuture<?>[0]))
        .thenApply(all -> asked.stream().map(CompletableFuture::join).toList());
  }

  private String families() {
    return ipv4 && ipv6 ? "A or AAAA" : ipv4 ? "A" : "AAAA";
  }

  /** Asks about ({@code name}, {@code type}) and follows aliases; never completes exceptionally. */
  CompletableFuture<Lookup> lookup(Name name, int type) {
    return ask(name, type, 0, Long.MAX_VALUE);
  }

  private CompletableFuture<Lookup> ask(Name name, int type, int aliases, long chainTtl) {
    return timed(name, type)
        .handle((reply, error) -> error != null ? failure(error, name, type) : Lookup.read(reply, name, type))
        .thenCompose(l -> {
          if (l instanceof Lookup.Alias a) {
            if (aliases >= Lookup.MAX_ALIASES) {
              return answered(new Lookup.Failed("alias_loop",
                  "more than " + Lookup.MAX_ALIASES + " aliases (CNAME) from " + name));
            }
            return ask(a.target(), type, aliases + 1, Math.min(chainTtl, a.ttlSeconds()));
          }
          if (l instanceof Lookup.Found f && f.ttlSeconds() > chainTtl) {
            return answered(new Lookup.Found(f.records(), f.additional(), chainTtl));
          }
          if (l instanceof Lookup.Absent a && a.ttlSeconds() > chainTtl) {
            return answered(new Lookup.Absent(a.nxdomain(), chainTtl));
          }
          return answered(l);
        });
  }

  /**
   * The client's reply, completed on the scheduler, or a {@link QueryTimeoutException} from the
   * scheduler's timer if no reply came within the timeout; whichever is first wins.
   */
  private CompletableFuture<org.xbill.DNS.Message> timed(Name name, int type) {
    CompletableFuture<org.xbill.DNS.Message> result = new CompletableFuture<>();
    Future<?> timer = scheduler.schedule(() -> result.completeExceptionally(new QueryTimeoutException(
        "no reply for " + name + " " + Type.string(type) + " within " + timeoutNanos / 1_000_000 + " ms")),
        timeoutNanos);
    CompletableFuture<org.xbill.DNS.Message> sent;
    try {
      sent = client.query(name, type);
    } catch (RuntimeException e) {
      sent = CompletableFuture.failedFuture(e);
    }
    var unused = sent.whenComplete((reply, error) -> {
      try {
        scheduler.execute(() -> {
          timer.cancel(false);
          if (error != null) {
            result.completeExceptionally(error);
          } else {
            result.complete(reply);
          }
        });
      } catch (RejectedExecutionException closed) {
        // the source is closed: nobody waits for this reply
      }
    });
    return result;
  }

  /** A failed question as a {@link Lookup.Failed}: {@code timeout}, {@code malformed} or {@code io}. */
  static Lookup.Failed failure(Throwable error, Name name, int type) {
    Throwable e = error;
    while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
      e = e.getCause();
    }
    String question = name + " " + Type.string(type);
    if (e instanceof QueryTimeoutException || e instanceof SocketTimeoutException
        || (e instanceof IOException && String.valueOf(e.getMessage()).startsWith("Timed out"))) {
      return new Lookup.Failed("timeout", "no reply for " + question + ": " + e.getMessage());
    }
    if (e instanceof WireParseException) {
      return new Lookup.Failed("malformed", "unreadable reply for " + question + ": " + e.getMessage());
    }
    if (e instanceof IOException) {
      return new Lookup.Failed("io", "could not ask for " + question + ": " + e);
    }
    return new Lookup.Failed("error", "could not ask for " + question + ": " + e);
  }

  private @Nullable InetAddress address(Record r) {
    if (r instanceof ARecord a && ipv4) {
      return a.getAddress();
    }
    if (r instanceof AAAARecord a && ipv6) {
      return a.getAddress();
    }
    return null;
  }

  private List<InetAddress> addressesOf(List<Record> records) {
    List<InetAddress> out = new ArrayList<>(records.size());
    for (Record r : records) {
      InetAddress a = address(r);
      if (a != null) {
        out.add(a);
      }
    }
    return out;
  }

  private static CompletableFuture<Outcome> outcome(Outcome o) {
    return CompletableFuture.completedFuture(o);
  }

  private static CompletableFuture<Lookup> answered(Lookup l) {
    return CompletableFuture.completedFuture(l);
  }
}
