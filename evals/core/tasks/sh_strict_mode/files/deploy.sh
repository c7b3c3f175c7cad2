#!/bin/sh
echo deploying
cp build/app /srv/app
