package dev.fairway.lb.kubernetes;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** An {@link ApiHttp} the test answers by hand: every request is recorded, with its future or listener. */
final class ScriptedApiHttp implements ApiHttp {
  record Get(String path, CompletableFuture<Reply> reply) {}

  static final class Watch implements Call {
    final String path;
    final WatchListener listener;
    boolean cancelled;

    Watch(String path, WatchListener listener) {
      this.path = path;
      this.listener = listener;
    }

    @Override
    public void cancel() {
      cancelled = true;
    }
  }

  final List<Get> gets = new ArrayList<>();
  final List<Watch> watches = new ArrayList<>();
  /** Every request path in order, lists and watches. */
  final List<String> paths = new ArrayList<>();

  @Override
  public CompletableFuture<Reply> get(String pathAndQuery, Duration timeout) {
    Get g = new Get(pathAndQuery, new CompletableFuture<>());
    gets.add(g);
    paths.add(pathAndQuery);
    return g.reply;
  }

  @Override
  public Call watch(String pathAndQuery, WatchListener listener) {
    Watch w = new Watch(pathAndQuery, listener);
    watches.add(w);
    paths.add(pathAndQuery);
    return w;
  }

  Get lastGet() {
    return gets.get(gets.size() - 1);
  }

  Watch lastWatch() {
    return watches.get(watches.size() - 1);
  }
}
