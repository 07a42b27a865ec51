package dev.fairway.lb.consul;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A {@link ConsulHttp} whose requests the test answers by hand: every {@link #get} is recorded and
 * stays open until {@link #reply} or {@link #fail}. Single-threaded.
 */
final class ScriptedHttp implements ConsulHttp {
  record Call(String pathAndQuery, Duration timeout, CompletableFuture<Reply> reply) {}

  private final List<Call> calls = new ArrayList<>();
  private RuntimeException throwNext;

  /** The next {@link #get} throws {@code e} instead of sending (a broken transport). */
  void throwOnNextGet(RuntimeException e) {
    throwNext = e;
  }

  @Override
  public CompletableFuture<Reply> get(String pathAndQuery, Duration timeout) {
    if (throwNext != null) {
      RuntimeException e = throwNext;
      throwNext = null;
      throw e;
    }
    Call c = new Call(pathAndQuery, timeout, new CompletableFuture<>());
    calls.add(c);
    return c.reply();
  }

  List<String> paths() {
    return calls.stream().map(Call::pathAndQuery).toList();
  }

  Call last() {
    if (calls.isEmpty()) {
      throw new AssertionError("no request was sent");
    }
    return calls.get(calls.size() - 1);
  }

  /** The newest request whose path starts with {@code prefix} and is not answered yet. */
  Call open(String prefix) {
    for (int i = calls.size() - 1; i >= 0; i--) {
      Call c = calls.get(i);
      if (c.pathAndQuery().startsWith(prefix) && !c.reply().isDone()) {
        return c;
      }
    }
    throw new AssertionError("no open request for " + prefix + " in " + paths());
  }

  /** Paths of the requests that start with {@code prefix}, oldest first. */
  List<String> paths(String prefix) {
    return calls.stream().map(Call::pathAndQuery).filter(p -> p.startsWith(prefix)).toList();
  }

  /** Answers the open request for {@code prefix} with a 200 carrying {@code X-Consul-Index: index}. */
  void ok(String prefix, long index, String body) {
    reply(prefix, 200, headers("X-Consul-Index", Long.toString(index)), body);
  }

  void reply(String prefix, int status, Map<String, List<String>> headers, String body) {
    open(prefix).reply().complete(new Reply(status, headers, body));
  }

  void fail(String prefix, Throwable t) {
    open(prefix).reply().completeExceptionally(t);
  }

  int count() {
    return calls.size();
  }

  /** Answers the open request (the last one) with a 200 and Consul's usual headers. */
  void ok(long index, String body) {
    reply(200, headers("X-Consul-Index", Long.toString(index)), body);
  }

  void reply(int status, Map<String, List<String>> headers, String body) {
    Call c = last();
    if (c.reply().isDone()) {
      throw new AssertionError("the last request was already answered: " + c.pathAndQuery());
    }
    c.reply().complete(new Reply(status, headers, body));
  }

  void fail(Throwable t) {
    last().reply().completeExceptionally(t);
  }

  /** Name-value pairs, plus {@code X-Consul-Knownleader: true} and {@code X-Consul-Lastcontact: 0} unless given. */
  static Map<String, List<String>> headers(String... nameValues) {
    Map<String, List<String>> h = new LinkedHashMap<>();
    h.put("Content-Type", List.of("application/json"));
    h.put("X-Consul-Knownleader", List.of("true"));
    h.put("X-Consul-Lastcontact", List.of("0"));
    for (int i = 0; i < nameValues.length; i += 2) {
      h.put(nameValues[i], List.of(nameValues[i + 1]));
    }
    return h;
  }
}
