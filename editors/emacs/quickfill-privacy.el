;;; quickfill-privacy.el --- Keep private files away from quickfill  -*- lexical-binding: t; -*-

;; Which buffers eglot never hands to a quickfill server (docs/security.md,
;; "Privacy"): a file matching the server's default privacy.exclude list or
;; `quickfill-exclude', or a buffer in one of `quickfill-disabled-modes'.
;; Such a buffer is not managed (so no didOpen, didChange or completion
;; request is ever sent for it) even when its major mode is one of
;; quickfill's; other servers' buffers are left alone.  The server applies
;; the same rules (`quickfill-exclude' is sent to it and added to its own
;; list), so this is a second line, not the guarantee.
;;
;; The globs are the server's (indexing/path_glob.h): `*', `?', `[...]' within
;; a path segment, `**' across folders, no `/' = any file or folder name at
;; any depth, a `/' anchors at the start, a match on a folder covers its
;; contents, a trailing `/' matches folders only, `~/' is the home folder; no
;; negation.

;;; Code:

(require 'cl-lib)
(require 'subr-x)

(defcustom quickfill-exclude nil
  "Globs of files never sent to quickfill, added to `quickfill-default-exclude'.
Also sent to the server as privacy.exclude (added to its own list)."
  :type '(repeat string)
  :group 'quickfill)

(defcustom quickfill-disabled-modes nil
  "Major modes whose buffers are never sent to quickfill."
  :type '(repeat symbol)
  :group 'quickfill)

;; They can only keep more files away from the server: safe as file or
;; directory local variables (a repository may exclude more, never less).
(put 'quickfill-exclude 'safe-local-variable (lambda (v) (and (listp v) (cl-every #'stringp v))))
(put 'quickfill-disabled-modes 'safe-local-variable (lambda (v) (and (listp v) (cl-every #'symbolp v))))

(defconst quickfill-default-exclude
  '(".env" ".env.*" ".envrc" "*.pem" "*.key" "id_rsa*" "id_ed25519*" "id_ecdsa*" "id_dsa*" "*.p12"
    "*.pfx" "*.jks" "*.keystore" "*.kdbx" "*.tfvars" "*.kubeconfig"
    ".npmrc" ".yarnrc.yml" ".pypirc" ".netrc" ".pgpass" ".my.cnf" ".git-credentials" ".htpasswd"
    ".vault-token" "**/.cargo/credentials" "**/.cargo/credentials.toml" "**/.gem/credentials"
    "**/secrets/**" "secrets.json" "secrets.yaml" "secrets.yml" "secrets.toml" "credentials.json"
    "client_secret*.json" "service-account*.json"
    "**/.ssh/**" "**/.gnupg/**" "**/.aws/credentials" "**/.aws/sso/cache/**" "**/.aws/cli/cache/**"
    "**/.config/gcloud/**" "**/.azure/**" "**/.oci/**" "**/.bluemix/**" "**/.docker/config.json"
    "**/.kube/config" "**/.config/gh/hosts.yml" "**/.config/doctl/config.yaml" "**/.config/hcloud/cli.toml"
    "**/.config/rclone/rclone.conf" "**/.databrickscfg" "**/.s3cfg" "**/.boto" "**/.terraform.d/credentials.tfrc.json"
    "**/.fly/config.yml" "**/.wrangler/config/**" "**/.config/op/**")
  "The server's default privacy.exclude (server/core/privacy_filter.cpp; a server
test checks that every entry is here).")

(defun quickfill-privacy--segment-regexp (seg)
  "An anchored regexp for the glob segment SEG."
  (let ((out "\\`") (i 0) (n (length seg)))
    (while (< i n)
      (let ((c (aref seg i)))
        (cond ((eq c ?*) (setq out (concat out ".*")))
              ((eq c ??) (setq out (concat out ".")))
              ((and (eq c ?\\) (< (1+ i) n))
               (setq i (1+ i))
               (setq out (concat out (regexp-quote (string (aref seg i))))))
              ((and (eq c ?\[) (string-match "\\]" seg (+ i 2)))
               (let* ((close (string-match "\\]" seg (+ i 2)))
                      (body (substring seg (1+ i) close)))
                 (when (string-prefix-p "!" body) (setq body (concat "^" (substring body 1))))
                 (setq out (concat out "[" body "]"))
                 (setq i close)))
              (t (setq out (concat out (regexp-quote (string c)))))))
      (setq i (1+ i)))
    (concat out "\\'")))

(defun quickfill-privacy--compile (pattern home)
  "PATTERN as (TEXT ANCHORED DIR-ONLY SEGMENTS), or nil; SEGMENTS are regexps or `**'."
  (let ((p pattern) (dir-only nil))
    (when (or (equal p "~") (string-prefix-p "~/" p))
      (setq p (and home (string-prefix-p "/" home) (concat home (substring p 1)))))
    (when p
      (while (string-suffix-p "/" p) (setq dir-only t p (substring p 0 -1)))
      (let ((parts (split-string p "/" t)))
        (when parts
          (when (and (cdr parts) (equal (car (last parts)) "**"))
            (setq parts (append (butlast parts) (list "*" "**"))))
          (list pattern (and (string-match-p "/" p) t) dir-only
                (mapcar (lambda (s) (if (equal s "**") '** (quickfill-privacy--segment-regexp s))) parts)))))))

(defun quickfill-privacy--match-segments (pat path)
  "Whether the compiled segments PAT match the list PATH (`**' spans any run)."
  (let ((p 0) (t* 0) (star-p nil) (star-t 0) (np (length pat)) (nt (length path)) (result 'undecided))
    (while (eq result 'undecided)
      (cond ((>= t* nt)
             (while (and (< p np) (eq (nth p pat) '**)) (setq p (1+ p)))
             (setq result (= p np)))
            ((and (< p np) (eq (nth p pat) '**))
             (setq star-p p star-t t* p (1+ p)))
            ((and (< p np) (string-match-p (nth p pat) (nth t* path)))
             (setq p (1+ p) t* (1+ t*)))
            (star-p (setq p (1+ star-p) star-t (1+ star-t) t* star-t))
            (t (setq result nil))))
    result))

(defun quickfill-privacy-matching-pattern (patterns path &optional home)
  "The first of PATTERNS matching PATH (absolute or relative), or nil."
  (let ((segs (split-string path "/" t)))
    (cl-loop for pattern in patterns
             for g = (quickfill-privacy--compile pattern home)
             when (and g segs
                       (cl-loop for k from 1 to (length segs)
                                for last = (= k (length segs))
                                until (and (nth 2 g) last)
                                thereis (if (nth 1 g)
                                            (quickfill-privacy--match-segments (nth 3 g) (cl-subseq segs 0 k))
                                          (string-match-p (car (nth 3 g)) (nth (1- k) segs)))))
             return pattern)))

(defun quickfill-private-reason (&optional buffer)
  "Why BUFFER (default: the current one) is never sent to quickfill, or nil."
  (with-current-buffer (or buffer (current-buffer))
    (if (memq major-mode quickfill-disabled-modes)
        (format "%s is in quickfill-disabled-modes" major-mode)
      (when-let ((path (and buffer-file-name (expand-file-name buffer-file-name))))
        (let* ((patterns (append quickfill-default-exclude quickfill-exclude))
               (home (expand-file-name "~"))
               (root (when-let ((pr (and (fboundp 'project-current) (project-current))))
                       (directory-file-name (expand-file-name (if (fboundp 'project-root) (project-root pr)
                                                                (car (project-roots pr)))))))
               (hit (or (quickfill-privacy-matching-pattern patterns path home)
                        (and root (string-prefix-p (concat root "/") path)
                             (quickfill-privacy-matching-pattern patterns (substring path (1+ (length root))) home)))))
          (and hit (format "it matches the privacy.exclude pattern %s" hit)))))))

(defun quickfill-privacy--refuse (&rest _)
  "Before eglot manages a buffer: non-nil (and eglot does not) for a private
buffer that a quickfill server would get."
  (when-let* ((server (ignore-errors (eglot-current-server)))
              ((and (find-class 'quickfill-eglot-server nil) (object-of-class-p server 'quickfill-eglot-server)))
              (why (quickfill-private-reason)))
    (message "quickfill: %s is not sent to the server: %s" (buffer-name) why)
    t))

(with-eval-after-load 'eglot
  (advice-add 'eglot--maybe-activate-editing-mode :before-until #'quickfill-privacy--refuse))

(provide 'quickfill-privacy)
;;; quickfill-privacy.el ends here
