package io.sparkjournal.journal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Map;

/**
 * The check that keeps a reader inside its lane (FORMAT.md, "A journal (lane)
 * directory"; JSON.md, "Error kinds": *outside*) for the paths it opens
 * inside a lane (its {@code large/} folder, {@code requests/} and its files):
 * the real location of
 * {@code lane/relative}, with {@code ..} and every symbolic link resolved as
 * {@code os.path.realpath} resolves them (a part that does not exist is kept
 * as written, a link loop is left unresolved), must be the lane's own real
 * location or below it. Otherwise {@link PathOutsideException} (the kind
 * *outside* of JSON.md's "Error kinds"), naming the paths.
 */
public final class InsideLane {

    private InsideLane() {
    }

    /** The real path of {@code lane/relative}; PathOutsideException if it leads out of the lane. */
    public static String check(String lane, String relative, String what) throws PathOutsideException {
        String realRoot = realpath(lane);
        String target = lane.endsWith("/") ? lane + relative : lane + "/" + relative;
        String real = realpath(target);
        String prefix = realRoot.endsWith("/") ? realRoot : realRoot + "/";
        if (!real.equals(realRoot) && !real.startsWith(prefix)) {
            boolean parent = false;
            for (String part : relative.split("/", -1)) {
                parent |= part.equals("..");
            }
            String plain = Paths.get(target).toAbsolutePath().normalize().toString();
            String how = !plain.equals(real) && !parent ? "through a symbolic link " : "";
            throw new PathOutsideException(what, relative, lane, what + " " + Shown.text(relative)
                    + " leads " + how + "to " + Shown.text(real) + ", outside the journal " + Shown.text(lane)
                    + "; sparkjournal only reads and writes inside its journal: name a folder "
                    + "inside it, without '..', absolute paths or symbolic links that lead out");
        }
        return real;
    }

    /** {@code os.path.realpath(path)} (not strict), for POSIX paths. */
    static String realpath(String path) {
        String absolute = path.startsWith("/") ? path
                : Paths.get("").toAbsolutePath().toString() + "/" + path;
        String resolved = join("/", absolute, new HashMap<>());
        return Paths.get(resolved).normalize().toString();
    }

    /** {@code rest} resolved onto the resolved {@code path}, part by part, as realpath(3) resolves. */
    private static String join(String path, String rest, Map<String, String> seen) {
        if (rest.startsWith("/")) {
            path = "/";
        }
        String[] names = rest.split("/", -1);
        for (int i = 0; i < names.length; i++) {
            String name = names[i];
            if (name.isEmpty() || name.equals(".")) {
                continue;
            }
            if (name.equals("..")) {
                int slash = path.lastIndexOf('/');
                path = slash <= 0 ? "/" : path.substring(0, slash);
                continue;
            }
            String next = path.endsWith("/") ? path + name : path + "/" + name;
            if (!Files.isSymbolicLink(Paths.get(next))) {
                path = next;
                continue;
            }
            if (seen.containsKey(next)) {
                String known = seen.get(next);
                if (known != null) {
                    path = known;
                    continue;
                }
                return next + remainder(names, i + 1);             // a loop: left as it is
            }
            seen.put(next, null);
            String link;
            try {
                link = Files.readSymbolicLink(Paths.get(next)).toString();
            } catch (IOException | UnsupportedOperationException unreadable) {
                path = next;
                continue;
            }
            path = join(path, link, seen);
            seen.put(next, path);
        }
        return path;
    }

    private static String remainder(String[] names, int from) {
        StringBuilder out = new StringBuilder();
        for (int i = from; i < names.length; i++) {
            out.append('/').append(names[i]);
        }
        return out.toString();
    }
}
